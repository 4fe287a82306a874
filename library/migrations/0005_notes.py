"""Readers' private notes on papers, and their stamp (library/sql/stamps.sql loaded again)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):

    dependencies = [
        ('library', '0004_sql_files'),
        ('papers', '0028_categories_stamp'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Note',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('text', models.TextField(max_length=5000)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('paper', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='papers.paper')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('user', 'paper'), name='one_note_per_paper')],
            },
        ),
        RunSQLFile("library", "stamps.sql"),
    ]
