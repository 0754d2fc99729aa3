from minibert.cli import main

main()
