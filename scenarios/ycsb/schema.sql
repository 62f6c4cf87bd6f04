create table usertable (
    ycsb_key bigint primary key,
    field0 text, field1 text, field2 text, field3 text, field4 text,
    field5 text, field6 text, field7 text, field8 text, field9 text,
    -- incremented by workload F's read-modify-writes (the check sums it)
    counter bigint not null default 0
);
insert into usertable (ycsb_key, field0, field1, field2, field3, field4,
                       field5, field6, field7, field8, field9)
select g, f, f, f, f, f, f, f, f, f, f
from generate_series(1, {{records}}) as g,
     lateral (select repeat(md5(g::text), 3) as f) v;
create sequence usertable_key_seq start with 1;
vacuum analyze usertable;
select setval('usertable_key_seq', {{records}});
