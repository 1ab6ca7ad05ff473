from gtp.match.cli import main

main()
