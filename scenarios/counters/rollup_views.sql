select rollup_views();
