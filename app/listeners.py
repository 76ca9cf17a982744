"""The game service with everything that listens to it: one place, so that a move made from any
entry point (web, API, mail, scheduler, command line) writes its mails and its deadlines."""

from __future__ import annotations

from app.core.config import Settings
from app.core.db import make_engine
from app.service import GameService


def build_service(settings: Settings, database_url: str | None = None) -> GameService:
    """A :class:`GameService` on ``database_url`` (default: the settings'), with the outbox
    notifications, the clock's deadline rows, the webhook rows, the push rows, a rematch's
    question by mail and the live pages' announcements installed as listeners."""
    from app.features.clock.timekeeper import install as install_timekeeper
    from app.features.live.feed import install as install_live
    from app.features.push.notifications import install as install_push
    from app.features.rematch.rematches import install as install_rematch
    from app.features.takeback.takebacks import install as install_takebacks
    from app.features.webhooks.hooks import install as install_webhooks
    from app.mail.notify import install as install_notifications

    url = database_url or settings.database_url
    pool = ({} if url.startswith("sqlite") else
            {"pool_size": settings.db_pool_size, "max_overflow": settings.db_max_overflow})
    service = GameService(make_engine(url, **pool), settings)
    install_notifications(service)
    install_timekeeper(service)
    install_webhooks(service)
    install_push(service)
    install_takebacks(service)
    install_rematch(service)
    install_live(service)
    return service
