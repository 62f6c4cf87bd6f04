-- Move each customer's limit into {{buckets}} buckets; the limit row keeps the initial
-- amount for the checks and its remaining drops to 0.
insert into limit_bucket (customer_id, day, bucket, remaining)
select d.customer_id, d.day, b,
       d.remaining / {{buckets}} + case when b = 0 then d.remaining % {{buckets}} else 0 end
from daily_limit d, generate_series(0, {{buckets}} - 1) as b;

update daily_limit set remaining = 0;

-- Take from the caller's bucket (p_bucket, e.g. the client's id, else chosen by backend
-- pid, so clients spread evenly); when it runs low, from another bucket that is not
-- locked; when all others are locked, wait for the first one that can pay. Returns 1 when
-- paid, 0 when refused.
create function pay_escrow(p_customer bigint, p_amount bigint, p_bucket bigint default null)
returns int
language plpgsql as $fn$
declare
    b int;
begin
    update limit_bucket
       set remaining = remaining - p_amount
     where customer_id = p_customer and day = current_date
       and bucket = coalesce(p_bucket, pg_backend_pid()) % {{buckets}}
       and remaining >= p_amount;
    if not found then
        select bucket into b from limit_bucket
         where customer_id = p_customer and day = current_date and remaining >= p_amount
         order by remaining desc
         limit 1 for update skip locked;
        if b is null then
            select bucket into b from limit_bucket
             where customer_id = p_customer and day = current_date and remaining >= p_amount
             order by bucket
             limit 1 for update;
        end if;
        if b is null then
            return 0;
        end if;
        update limit_bucket
           set remaining = remaining - p_amount
         where customer_id = p_customer and day = current_date and bucket = b
           and remaining >= p_amount;
        if not found then
            return 0;
        end if;
    end if;
    insert into ledger (customer_id, day, amount)
    values (p_customer, current_date, p_amount);
    return 1;
end;
$fn$;
