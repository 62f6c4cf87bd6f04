-- Read the row (locking it), modify in the client, write it back.
{{dist}}
begin;
select field0, counter from usertable where ycsb_key = :k for update
\gset
\set counter :counter + 1
update usertable set field0 = md5(:field0), counter = :counter where ycsb_key = :k;
commit;
