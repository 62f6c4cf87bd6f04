-- Lock the limit row (FOR UPDATE, or FOR SHARE: two payers holding the share lock both
-- want to upgrade it and one is chosen as the deadlock victim), decide in the client,
-- write it back.
\set customer random(1, :customers)
\set amount random(1, :max_amount)
begin;
select remaining from daily_limit
 where customer_id = :customer and day = current_date
   for {{lock}}
\gset
\if :remaining >= :amount
\set remaining :remaining - :amount
update daily_limit
   set remaining = :remaining, last_update = now()
 where customer_id = :customer and day = current_date;
insert into ledger (customer_id, day, amount) values (:customer, current_date, :amount);
\else
\set hotbench_ok 0
\endif
commit;
