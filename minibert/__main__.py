from minibert.training.cli import main

main()
