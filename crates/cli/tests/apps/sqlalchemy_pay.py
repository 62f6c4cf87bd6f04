"""An SQLAlchemy ORM paying from skewed accounts (account 1 drawn 4x as often as each of the
other 7): `select(Account).with_for_update()`, then `account.balance -= amount` and a
payment row, committed by the session. `--mode counter` instead increments the balance with
`update(Account).values(balance=Account.balance + 1)` (and `- 1` one call in ten) and reads
the balance back in the same transaction."""
import random

import common


def extra(p):
    p.add_argument("--mode", choices=["pay", "counter"], default="pay")


a = common.args(extra)

from sqlalchemy import BigInteger, ForeignKey, create_engine, select, update  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column  # noqa: E402


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    balance: Mapped[int] = mapped_column(BigInteger, default=0)


class Payment(Base):
    __tablename__ = "payments"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    amount: Mapped[int] = mapped_column(BigInteger)


engine = create_engine(
    f"postgresql+psycopg://{a.user}@/{a.dbname}?host={a.host}&port={a.port}",
    pool_size=a.clients,
)

if a.setup:
    Base.metadata.create_all(engine)
    with Session(engine) as s, s.begin():
        s.add_all([Account(id=i, balance=1_000_000) for i in range(1, 9)])
    raise SystemExit(0)


def pick(rnd):
    r = rnd.randint(1, 11)
    return 1 if r <= 4 else r - 3


def client(stop):
    n = 0
    rnd = random.Random()
    while not stop.is_set():
        k = pick(rnd)
        amount = rnd.randint(1, 10)
        with Session(engine) as s, s.begin():
            if a.mode == "pay":
                acct = s.execute(select(Account).where(Account.id == k).with_for_update()).scalar_one()
                acct.balance -= amount
                s.add(Payment(account_id=k, amount=amount))
            else:
                if rnd.random() < 0.1:
                    s.execute(update(Account).where(Account.id == k).values(balance=Account.balance - 1))
                else:
                    s.execute(update(Account).where(Account.id == k).values(balance=Account.balance + 1))
                # The new balance, read back in the same transaction (the row stays locked).
                s.execute(select(Account.balance).where(Account.id == k)).scalar_one()
        n += 1
    return n


common.run(a, client)
