module github.com/vkwatch/vkwatch

go 1.26.8
