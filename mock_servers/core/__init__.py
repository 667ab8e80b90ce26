"""What every mock server shares: database access, the tool toolkit, errors, paging, files."""
