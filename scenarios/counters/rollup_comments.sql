select rollup_comments();
