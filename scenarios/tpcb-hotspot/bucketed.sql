-- Each branch and teller becomes {{buckets}} rows; the tables' names become views that show
-- a session only its own bucket (backend pid modulo {{buckets}}), so the unchanged script
-- updates one of {{buckets}} rows instead of the single hot one.
alter table pgbench_branches rename to branch_base;
alter table pgbench_tellers rename to teller_base;

create table branch_bucket (
    bid int not null, bucket int not null, bbalance int not null, filler char(88),
    primary key (bid, bucket)
);
insert into branch_bucket
select bid, b, case when b = 0 then bbalance else 0 end, filler
from branch_base, generate_series(0, {{buckets}} - 1) as b;

create table teller_bucket (
    tid int not null, bucket int not null, bid int not null, tbalance int not null, filler char(84),
    primary key (tid, bucket)
);
insert into teller_bucket
select tid, b, bid, case when b = 0 then tbalance else 0 end, filler
from teller_base, generate_series(0, {{buckets}} - 1) as b;

create view pgbench_branches as
select bid, bbalance, filler from branch_bucket where bucket = pg_backend_pid() % {{buckets}};
create view pgbench_tellers as
select tid, bid, tbalance, filler from teller_bucket where bucket = pg_backend_pid() % {{buckets}};

create or replace view all_branches as
select bid, sum(bbalance)::bigint as bbalance from branch_bucket group by bid;
create or replace view all_tellers as
select tid, min(bid) as bid, sum(tbalance)::bigint as tbalance from teller_bucket group by tid;
vacuum analyze branch_bucket;
vacuum analyze teller_bucket;
