"""What a model's cloze is read against where no exact oracle exists, and what every reference shares with the
oracle: the n-gram references counted on a corpus's training split (`ngrams`), and how a reference's answer is
credited on a graded position (`credit`). Ground floor: numpy and scipy only, so a language (minibert.languages.text)
builds its references without importing the masking or the oracle that sit above the languages."""
