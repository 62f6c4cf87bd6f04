"""A Django view counter: a view that counts a visit with
`Page.objects.filter(pk=k).update(views=F("views") + 1)` (one call in ten `F("views") - 1`)
and then reads the page, in one transaction (`transaction.atomic()`, as `ATOMIC_REQUESTS`
does), on 4 pages, from N threads. Django emits
`UPDATE "site_page" SET "views" = ("site_page"."views" + %s) WHERE "site_page"."id" = %s`."""
import random

import common

a = common.args()

import django  # noqa: E402
from django.conf import settings  # noqa: E402

settings.configure(
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": a.dbname,
            "USER": a.user,
            "HOST": a.host,
            "PORT": str(a.port),
        }
    },
    INSTALLED_APPS=[],
    USE_TZ=True,
)
django.setup()

from django.db import connection, models, transaction  # noqa: E402
from django.db.models import F  # noqa: E402


class Page(models.Model):
    views = models.BigIntegerField(default=0)

    class Meta:
        app_label = "site"
        db_table = "site_page"


if a.setup:
    with connection.schema_editor() as e:
        e.create_model(Page)
    Page.objects.bulk_create([Page(id=i) for i in range(1, 5)])
    raise SystemExit(0)


def client(stop):
    n = 0
    rnd = random.Random()
    while not stop.is_set():
        k = rnd.randint(1, 4)
        with transaction.atomic():
            if rnd.random() < 0.1:
                Page.objects.filter(pk=k).update(views=F("views") - 1)
            else:
                Page.objects.filter(pk=k).update(views=F("views") + 1)
            Page.objects.get(pk=k)
        n += 1
    connection.close()
    return n


common.run(a, client)
