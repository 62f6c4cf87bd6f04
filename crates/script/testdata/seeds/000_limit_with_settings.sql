\set account random(1,4)
\set spend random(1,10)
begin transaction;
set local lock_timeout='2s'; -- default 0
set local statement_timeout='5s'; -- default 0
update spend_allowance set allowance=allowance-:spend, touched_at=now() where account_id=:account and on_day=current_date returning allowance-:spend as allowance
\gset
commit;
