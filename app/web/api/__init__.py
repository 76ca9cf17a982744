"""The JSON API under ``/api/`` (OpenAPI document at ``/api/openapi.json``): the games' routes
(:mod:`.games`) and what the OpenAPI document says of requests and answers (:mod:`.schemas`)."""
