"""The app's pages: script, title and address. main.py builds the navigation from them;
first_page.py answers each address with the app's first page (server.py)."""

from __future__ import annotations

# (script in page_scripts/, title in the menu, URL path); the addresses are fixed so that
# shared links keep working.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("releases.py", "Releases", "releases"),
    ("slices.py", "Slices", "slices"),
    ("lottery.py", "Lottery cases", "lottery"),
    ("case.py", "Case", "case"),
    ("gates.py", "Gates", "gates"),
    ("review.py", "Review", "review"),
    ("reviews.py", "Reviews", "reviews"),
    ("calculator.py", "Calculator", "calculator"),
    ("data.py", "Data", "data"),
)
HOME = "home"  # the hidden default page, which sends a visitor on to /releases

URL_PATHS: tuple[str, ...] = (HOME, *(path for _, _, path in PAGES))
