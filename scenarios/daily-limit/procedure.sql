-- One round trip: the procedure decides and records.
\set customer random(1, :customers)
\set amount random(1, :max_amount)
call pay(:customer, :amount, 0)
\gset
