{{dist}}
select * from usertable where ycsb_key = :k;
