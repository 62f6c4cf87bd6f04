insert into usertable (ycsb_key, field0, field1, field2, field3, field4,
                       field5, field6, field7, field8, field9)
select nextval('usertable_key_seq'), f, f, f, f, f, f, f, f, f, f
from (select repeat(md5(random()::text), 3) as f) v;
