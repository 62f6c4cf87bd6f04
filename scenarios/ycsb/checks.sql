select 'read-modify-writes lost no update' as name,
       sum(counter) between {{committed:rmw.sql}} and {{committed:rmw.sql}} + {{in_doubt:rmw.sql}} as ok,
       format('counters add up to %s, %s read-modify-writes committed, %s in doubt', sum(counter), {{committed:rmw.sql}}, {{in_doubt:rmw.sql}}) as detail
from usertable;

select 'no key missing' as name,
       count(*) >= {{records}} as ok,
       format('%s rows', count(*)) as detail
from usertable;
