select 'accounts = history' as name,
       (select coalesce(sum(abalance), 0) from pgbench_accounts)
         = (select coalesce(sum(delta), 0) from pgbench_history) as ok,
       format('accounts %s, history %s',
              (select coalesce(sum(abalance), 0) from pgbench_accounts),
              (select coalesce(sum(delta), 0) from pgbench_history)) as detail;

-- A transaction in doubt may still have committed: cancelled at the end of the run (the
-- cancel lost the race), or cut by a lost connection after its commit (a restart).
select 'history rows = committed transactions' as name,
       count(*) between {{committed}} and {{committed}} + {{in_doubt}} as ok,
       format('%s history rows, %s committed, %s in doubt (cancelled at the end or cut by a lost connection)',
              count(*), {{committed}}, {{in_doubt}}) as detail
from pgbench_history;
