begin;
select id as next_id from order_inbox where pg_try_advisory_xact_lock(id) order by id limit 1 \gset
\sleep 10ms
with picked as (delete from order_inbox where id = :next_id returning order_ref, created_at)
insert into order_done (order_ref,created_at,done_at,state) select picked.order_ref, picked.created_at, now(), 1 from picked;
end;
