-- Escrow with an allowance per client: with at least as many buckets as clients, client
-- N spends from bucket N of the customer's limit, so no two clients wait on one row
-- until an allowance runs low (then pay_escrow takes from another bucket).
\set customer random(1, :customers)
\set amount random(1, :max_amount)
select pay_escrow(:customer, :amount, :client_id) as paid
\gset
