"""A fill's notice names the price and the fee apart ("bought 1 share for 1.25 credits, plus a
fee of 0.01 credits"), so that an order's limit is seen to hold, and a lone waiting share
"still waits". Defined in market/sql/fill_orders.sql."""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [("market", "0013_sql_files")]

    operations = [RunSQLFile("market", "fill_orders.sql")]
