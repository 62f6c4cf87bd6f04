select 'accounts = history' as name,
       (select coalesce(sum(abalance), 0) from pgbench_accounts)
         = (select coalesce(sum(delta), 0) from pgbench_history) as ok,
       format('accounts %s, history %s',
              (select coalesce(sum(abalance), 0) from pgbench_accounts),
              (select coalesce(sum(delta), 0) from pgbench_history)) as detail;

select 'history rows = committed transactions' as name,
       count(*) = {{committed}} as ok,
       format('%s history rows, %s committed', count(*), {{committed}}) as detail
from pgbench_history;
