-- Per customer: what left the limit (row + buckets) is exactly what the ledger recorded.
select 'limits account for the ledger' as name,
       coalesce(bool_and(spent = recorded), true) as ok,
       coalesce(string_agg(format('customer %s: limit went down by %s, ledger holds %s',
                                  customer_id, spent, recorded), '; ')
                filter (where spent <> recorded), '') as detail
from (
    select d.customer_id,
           d.initial - d.remaining - coalesce((select sum(b.remaining) from limit_bucket b
                                               where b.customer_id = d.customer_id
                                                 and b.day = d.day), 0) as spent,
           coalesce((select sum(l.amount) from ledger l
                     where l.customer_id = d.customer_id and l.day = d.day), 0) as recorded
    from daily_limit d
) per_customer;

select 'nothing below zero' as name,
       not exists (select 1 from daily_limit where remaining < 0)
       and not exists (select 1 from limit_bucket where remaining < 0) as ok,
       '' as detail;

-- A payment cancelled at the end of the run may still have committed (the cancel lost the race).
select 'ledger rows = payments the clients saw succeed' as name,
       count(*) between {{goodput}} and {{goodput}} + {{unfinished}} as ok,
       format('%s ledger rows, %s successful payments reported, %s cancelled at the end',
              count(*), {{goodput}}, {{unfinished}}) as detail
from ledger;
