create procedure pay(p_customer bigint, p_amount bigint, inout paid int default 0)
language plpgsql as $proc$
begin
    update daily_limit
       set remaining = remaining - p_amount, last_update = now()
     where customer_id = p_customer and day = current_date
       and remaining >= p_amount;
    if found then
        insert into ledger (customer_id, day, amount)
        values (p_customer, current_date, p_amount);
        paid := 1;
    else
        paid := 0;
    end if;
end;
$proc$;
