-- What the checks read: every branch and teller balance, whatever the layout.
create view all_branches as select bid, bbalance::bigint as bbalance from pgbench_branches;
create view all_tellers as select tid, bid, tbalance::bigint as tbalance from pgbench_tellers;
