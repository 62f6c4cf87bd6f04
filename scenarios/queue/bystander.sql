-- A light OLTP transaction beside the queue (--param bystanders=N at bystander_rate/s).
\set id random(1, 1000)
update bystander_account set balance = balance + 1 where id = :id;
