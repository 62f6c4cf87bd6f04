\set x case when 1 then 2 when 3 then 4 else 5 end is not null isnull
