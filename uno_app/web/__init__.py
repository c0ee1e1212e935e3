"""The web app: play UNO in a browser against the AI, watch AI games, replay any game.

``uno-env serve`` (``uno_app.web.server.main``) starts it on http://127.0.0.1:8000.
``protocol`` lists the WebSocket messages, ``sessions`` what each kind of session sends
(a person's browser gets only what its seat may know), ``seats`` the opponents offered.
The page is plain HTML, CSS and JavaScript in ``static/``, shipped inside the package.
"""
