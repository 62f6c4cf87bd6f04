\set customer random(1, :customers)
\set amount random(1, :max_amount)
select pay_escrow(:customer, :amount) as paid
\gset
