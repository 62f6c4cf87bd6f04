begin transaction;
select owner_id, item_id, body, 1 as got_one from work_items 
 where owner_id=0 
 for update skip locked limit 1
\gset
delete from work_items 
 where owner_id=:owner_id and item_id=:item_id;
commit;
