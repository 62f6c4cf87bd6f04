\set account random(1,4)
\set spend random(1,10)
begin transaction;
select allowance from spend_allowance
where account_id=:account and on_day=current_date for update
\gset
\set allowance :allowance - :spend
update spend_allowance
set allowance=:allowance, touched_at=now()
where account_id=:account and on_day=current_date;
commit;
