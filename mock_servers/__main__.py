"""`python -m mock_servers SERVER --world DIR [--transport stdio|http]`: serve one server."""

from mock_servers.serve import main

if __name__ == "__main__":
    main()
