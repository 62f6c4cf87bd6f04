select 'tellers = branches = history' as name,
       t = b and b = h as ok,
       format('tellers %s, branches %s, history %s', t, b, h) as detail
from (select (select coalesce(sum(tbalance), 0) from all_tellers) as t,
             (select coalesce(sum(bbalance), 0) from all_branches) as b,
             (select coalesce(sum(delta), 0) from pgbench_history) as h) s;

select 'each branch = its tellers' as name,
       coalesce(bool_and(b.bbalance = t.total), true) as ok,
       coalesce(string_agg(format('branch %s: %s vs tellers %s', b.bid, b.bbalance, t.total), '; ')
                filter (where b.bbalance <> t.total), '') as detail
from all_branches b
join (select bid, sum(tbalance) as total from all_tellers group by bid) t using (bid);
