"""gunicorn settings for the live connections of the pages:
``gunicorn -c deploy/gunicorn-live.conf.py app.wsgi:app`` (``pip install 'titanpost[gevent]'``).

Every open game page and My games hold a Server-Sent Events stream (``GET /games/<id>/live``,
``GET /live/games``, app/features/live/) for up to 30 minutes. Under the web instance's thread
workers (deploy/gunicorn.conf.py) each open page would hold a thread; this second instance of
the same app serves them from gevent workers instead: one greenlet a page, up to
``GUNICORN_LIVE_WORKER_CONNECTIONS`` a process, and a quiet page costs no CPU (its greenlet
waits on an event; one LISTEN connection per process hears every game's changes). nginx
(deploy/nginx/titanpost.conf) sends only those routes here, unbuffered, and everything else
to the web instance. gunicorn's gevent worker monkey-patches at its start, before the app is
imported, so psycopg 3 and the feed's listener thread cooperate with the greenlets.

Everything else (logger, forwarded addresses, max requests...) is deploy/gunicorn.conf.py's.
"""

import os
import runpy

_base = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "gunicorn.conf.py"))
globals().update({name: value for name, value in _base.items()
                  if not name.startswith("_") and name not in {"os", "multiprocessing"}})

bind = os.environ.get("GUNICORN_LIVE_BIND", "127.0.0.1:8100")
# One process holds thousands of open pages; a second one keeps half of them connected while
# the other restarts (max_requests, a reload), and their pages connect again within seconds.
workers = int(os.environ.get("GUNICORN_LIVE_WORKERS", "2"))
worker_class = "gevent"
worker_connections = int(os.environ.get("GUNICORN_LIVE_WORKER_CONNECTIONS", "2000"))
# Under gevent the timeout is the worker's heartbeat (a greenlet of its own ticks every second
# however long the streams are), not a limit on a request: a stream lasts its 30 minutes
# (app/features/live/pages.py, LIFETIME). Long enough that a busy moment never gets a
# worker killed with all its pages.
timeout = int(os.environ.get("GUNICORN_LIVE_TIMEOUT", "120"))
# Streams never end by themselves: a stop or reload waits this long, then closes them, and each
# page connects again (its mark tells it whether it missed a change meanwhile).
graceful_timeout = int(os.environ.get("GUNICORN_LIVE_GRACEFUL_TIMEOUT", "10"))
# Each stream is one request: a worker restarts after this many pages opened.
max_requests = int(os.environ.get("GUNICORN_LIVE_MAX_REQUESTS", "50000"))
max_requests_jitter = 5000
