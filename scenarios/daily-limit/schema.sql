-- One limit row per customer for today, and the ledger of accepted payments.
create table daily_limit (
    customer_id bigint not null,
    day         date   not null,
    initial     bigint not null,
    remaining   bigint not null check (remaining >= 0),
    last_update timestamptz,
    primary key (customer_id, day)
);

insert into daily_limit (customer_id, day, initial, remaining)
select c, current_date, {{tight}}, {{tight}}
from generate_series(1, {{customers}}) as c;

-- Escrow buckets (used by the escrow variant only; empty otherwise).
create table limit_bucket (
    customer_id bigint not null,
    day         date   not null,
    bucket      int    not null,
    remaining   bigint not null check (remaining >= 0),
    primary key (customer_id, day, bucket)
);

create table ledger (
    id          bigint generated always as identity primary key,
    customer_id bigint not null,
    day         date   not null,
    amount      bigint not null check (amount > 0),
    paid_at     timestamptz not null default clock_timestamp()
);
