from match.cli import main

main()
