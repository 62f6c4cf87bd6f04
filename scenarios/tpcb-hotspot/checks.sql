select 'accounts = history' as name,
       (select coalesce(sum(abalance), 0) from pgbench_accounts)
         = (select coalesce(sum(delta), 0) from pgbench_history) as ok,
       format('accounts %s, history %s',
              (select coalesce(sum(abalance), 0) from pgbench_accounts),
              (select coalesce(sum(delta), 0) from pgbench_history)) as detail;

-- A transaction cancelled at the end of the run may still have committed (the cancel lost the race).
select 'history rows = committed transactions' as name,
       count(*) between {{committed}} and {{committed}} + {{unfinished}} as ok,
       format('%s history rows, %s committed, %s cancelled at the end',
              count(*), {{committed}}, {{unfinished}}) as detail
from pgbench_history;
