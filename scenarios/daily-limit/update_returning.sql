-- One statement: the decrement only happens when the limit allows it, and the ledger row
-- is written from what the UPDATE returned. No rows back = refused.
\set customer random(1, :customers)
\set amount random(1, :max_amount)
with paid as (
    update daily_limit
       set remaining = remaining - :amount, last_update = now()
     where customer_id = :customer and day = current_date
       and remaining >= :amount
 returning customer_id, day
)
insert into ledger (customer_id, day, amount)
select customer_id, day, :amount from paid
returning id;
