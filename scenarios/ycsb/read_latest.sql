-- The most recently inserted keys are the most popular.
\set back random_zipfian(1, :records, {{zipf_s}}) - 1
select * from usertable
 where ycsb_key = (select last_value from usertable_key_seq) - :back;
