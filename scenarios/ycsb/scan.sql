{{dist}}
\set len random(1, 100)
select * from usertable where ycsb_key >= :k order by ycsb_key limit :len;
