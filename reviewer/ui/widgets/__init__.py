"""Views: they draw what their screen gives them and post messages up; they never touch the data."""
