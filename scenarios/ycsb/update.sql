{{dist}}
update usertable set field0 = md5(random()::text) where ycsb_key = :k;
