-- After the run every transaction has ended: one last rollup of each kind.
select rollup_views();
select rollup_comments();
