import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")

django_application = get_wsgi_application()

# Anonymous reads of a page rendered less than a second ago are answered before Django
# (peerrevenue/microcache.py), once Django is set up.
from peerrevenue.microcache import Microcache  # noqa: E402

application = Microcache(django_application)
