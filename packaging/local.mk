# Packages: `make rpm` and `make deb` build from the `make dist` tarball.
EXTRA_DIST += packaging/loom.spec.in packaging/debian packaging/check-packages.sh LICENSE

rpm: dist
	rm -rf $(abs_builddir)/rpmbuild
	mkdir -p $(abs_builddir)/rpmbuild/SOURCES $(abs_builddir)/rpmbuild/SPECS
	cp $(DIST_ARCHIVES) $(abs_builddir)/rpmbuild/SOURCES/
	cp packaging/loom.spec $(abs_builddir)/rpmbuild/SPECS/
	rpmbuild --define "_topdir $(abs_builddir)/rpmbuild" --define "slurm_src $(SLURM_SRC_ARG)" \
		--nodeps -bb $(abs_builddir)/rpmbuild/SPECS/loom.spec
	@ls $(abs_builddir)/rpmbuild/RPMS/*/*.rpm

deb: dist
	rm -rf $(abs_builddir)/debbuild
	mkdir -p $(abs_builddir)/debbuild
	tar -C $(abs_builddir)/debbuild -xf $(PACKAGE)-$(VERSION).tar.xz
	cp -r $(abs_srcdir)/packaging/debian $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian
	chmod -R u+w $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian
	echo "$(SLURM_SRC_ARG)" > $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian/slurm-src
	printf '%s\n' "loom ($(VERSION)-1) unstable; urgency=medium" "" "  * Release $(VERSION)." "" \
		" -- loom developers <loom@lists.loom-hpc.org>  $$(date -R)" \
		> $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian/changelog
	cd $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION) && dpkg-buildpackage -b -us -uc -d -j2
	@ls $(abs_builddir)/debbuild/*.deb

.PHONY: rpm deb
