-- Per customer: what left the limit (row + buckets) is exactly what the ledger recorded.
-- Set-based: the ledger and the buckets are each summed once, grouped by customer, and
-- joined (a correlated sum per customer read the ledger once per customer: 148 s for the
-- ceiling's 4,000 customers and 730,000 ledger rows).
select 'limits account for the ledger' as name,
       coalesce(bool_and(spent = recorded), true) as ok,
       coalesce(string_agg(format('customer %s: limit went down by %s, ledger holds %s',
                                  customer_id, spent, recorded), '; ')
                filter (where spent <> recorded), '') as detail
from (
    select d.customer_id,
           d.initial - d.remaining - coalesce(b.remaining, 0) as spent,
           coalesce(l.amount, 0) as recorded
    from daily_limit d
    left join (select customer_id, day, sum(remaining) as remaining
                 from limit_bucket group by customer_id, day) b using (customer_id, day)
    left join (select customer_id, day, sum(amount) as amount
                 from ledger group by customer_id, day) l using (customer_id, day)
) per_customer;

select 'nothing below zero' as name,
       not exists (select 1 from daily_limit where remaining < 0)
       and not exists (select 1 from limit_bucket where remaining < 0) as ok,
       '' as detail;

-- A payment in doubt may still have committed: cancelled at the end of the run (the cancel
-- lost the race), or cut by a lost connection after its commit (a restart).
select 'ledger rows = payments the clients saw succeed' as name,
       count(*) between {{goodput}} and {{goodput}} + {{in_doubt}} as ok,
       format('%s ledger rows, %s successful payments reported, %s in doubt (cancelled at the end or cut by a lost connection)',
              count(*), {{goodput}}, {{in_doubt}}) as detail
from ledger;
