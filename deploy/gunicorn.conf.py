"""gunicorn settings for Titan Post: ``gunicorn -c deploy/gunicorn.conf.py app.wsgi:app``.

Every value can be overridden from the environment (``GUNICORN_*`` below) so the same file
serves a small VPS and a bigger machine. Web workers never run the scheduler: run one or more
``titanpost worker`` processes beside them.
"""

import multiprocessing
import os

from gunicorn.glogging import Logger


class RedactingLogger(Logger):
    """gunicorn's own log without secrets: at debug level it names every request's path,
    and the paths of signed links and invitations carry them (see app/core/observability.py)."""

    def setup(self, cfg):  # type: ignore[no-untyped-def]
        super().setup(cfg)
        from app.core.observability import RedactFilter

        for log in (self.error_log, self.access_log):
            log.addFilter(RedactFilter())


bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", str(min(8, multiprocessing.cpu_count() * 2 + 1))))
# gthread: threads share the per-process game-state cache. A thread is given a request once its
# headers are in, and holds it while the body comes: behind nginx (deploy/nginx/), which reads
# every body whole before it passes a request on, slow clients never reach it. A server that
# clients reach directly runs GUNICORN_WORKER_CLASS=gevent (pip install 'titanpost[gevent]'):
# each connection a greenlet, its body read without holding anything else up, for about 15%
# more CPU a move and a fifth fewer moves a second (bench/README.md, "bench/slow_bodies.py").
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))  # (gevent)
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20
keepalive = 5
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))
max_requests_jitter = 500
preload_app = False  # each worker opens its own database pool after the fork
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = None  # Titan Post logs every request itself, with its request id
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
logger_class = RedactingLogger
