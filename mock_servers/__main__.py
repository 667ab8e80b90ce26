"""`python -m mock_servers SERVER --world DIR [--transport stdio|http]`: same as `loca serve`."""

from loca.cli import serve_main

if __name__ == "__main__":
    serve_main()
