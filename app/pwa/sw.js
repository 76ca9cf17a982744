/* Titan Post's service worker (served at /sw.js, scope "/").
   It shows the "your turn" notifications the server pushes (app/push.py) and opens the
   game page when one is clicked. It caches nothing: every page is the server's. */
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function readPush(event) {
  if (!event.data) {
    return {};
  }
  try {
    return event.data.json();
  } catch (error) {
    return { body: event.data.text() };
  }
}

function sameOrigin(url) {
  /* Only this server's pages are opened, whatever a payload says. */
  try {
    const target = new URL(url || "/", self.location.origin);
    return target.origin === self.location.origin ? target.href : self.location.origin + "/";
  } catch (error) {
    return self.location.origin + "/";
  }
}

self.addEventListener("push", (event) => {
  const data = readPush(event);
  event.waitUntil(self.registration.showNotification(data.title || "Titan Post", {
    body: data.body || "",
    tag: data.tag || "titanpost",
    renotify: Boolean(data.tag),
    icon: "/icons/icon-192.png",
    badge: "/icons/icon-192.png",
    data: { url: sameOrigin(data.url) },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = sameOrigin((event.notification.data || {}).url);
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true })
    .then((windows) => {
      for (const client of windows) {
        if (client.url === url && "focus" in client) {
          return client.focus();
        }
      }
      return self.clients.openWindow(url);
    }));
});
