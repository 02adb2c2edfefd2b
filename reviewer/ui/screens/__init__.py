"""Screens: coordinators that ask `ReviewService` for data in workers and hand it to their widgets."""
